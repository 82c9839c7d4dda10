# signupd in het Nederlands: elk woord dat een bezoeker leest op de pagina's en in de twee mails.
# De id's van de berichten en de variabelen ($list, $site, ...) zijn die van en.ftl.
#
# Aanspreekvorm: "je/jij", zoals het Nederlandse web voor nieuwsbrieven; korte zinnen.
# Woordenlijst:
#   sign up / signup        - aanmelden / aanmelding
#   confirm                 - bevestigen
#   list                    - lijst
#   remove (my address)     - (mijn adres) verwijderen
#   preferences             - voorkeuren / voorkeurenpagina
#   email address           - e-mailadres (kort: adres)
#   link                    - link
#   subscription            - aanmelding
#   unsubscribe             - afmelden
#   mail                    - e-mail (de)
#   one-way hash            - onomkeerbare hash

## Mail dates

date-format = { $day } { $month } { $year }, { $time } UTC
date-month-1 = januari
date-month-2 = februari
date-month-3 = maart
date-month-4 = april
date-month-5 = mei
date-month-6 = juni
date-month-7 = juli
date-month-8 = augustus
date-month-9 = september
date-month-10 = oktober
date-month-11 = november
date-month-12 = december

## Durations

duration-second =
    { $n ->
        [one] { $n } seconde
       *[other] { $n } seconden
    }
duration-minute =
    { $n ->
        [one] { $n } minuut
       *[other] { $n } minuten
    }
duration-hour =
    { $n ->
        [one] { $n } uur
       *[other] { $n } uur
    }
duration-day =
    { $n ->
        [one] { $n } dag
       *[other] { $n } dagen
    }
duration-and = { $init } en { $last }
duration-separator = {", "}
duration-per = { $n } per { $duration }

## page

page-back-to = Terug naar { $site }
page-privacy = Wat we bewaren en hoe lang
page-languages = In andere talen:

## errors

errors-unavailable-title = Probeer het opnieuw
errors-unavailable = Dat lukte op dit moment niet. Probeer het over een minuut opnieuw.
errors-not-found-title = Niet gevonden
errors-not-found = Hier staat geen aanmeldformulier.
errors-not-found-link = Naar het aanmeldformulier
errors-incomplete-title = Deze link is onvolledig
errors-incomplete = De link lijkt afgebroken of gewijzigd. Open hem opnieuw vanuit de e-mail, of kopieer het hele adres naar je browser.
errors-refused-title = Dat lukte niet
errors-refused = Het verzoek kon niet worden gelezen. Ga terug naar de pagina en probeer het opnieuw.
errors-timeout = Het verzoek kwam niet op tijd aan. Probeer het opnieuw.
errors-internal = Er ging bij ons iets mis. Probeer het over een minuut opnieuw.

## signup

signup-title = Aanmelden: { $list }
signup-heading = Aanmelden voor { $list }
signup-intro = Vul je e-mailadres in. We sturen je een link; je bent pas aangemeld als je die opent en bevestigt.
signup-email-label = E-mailadres
signup-honeypot-label = Laat dit veld leeg
signup-submit = Aanmelden
signup-choose-title = Aanmelden
signup-choose = Kies een lijst:
signup-several-title = Aanmelden
signup-several-heading = Aanmelden
signup-lists-legend = Welke lijsten wil je ontvangen?
signup-several-consent = Stuur me de lijsten die ik heb aangevinkt per e-mail. Ik kan me voor elke lijst op elk moment afmelden.
signup-no-list-ticked = Vink ten minste één lijst aan.
signup-optional = optioneel
signup-choose-option = Maak een keuze
signup-field-missing = Vul “{ $field }” in.
signup-field-invalid = Controleer “{ $field }”: kies een van de opties, of houd het korter en op één regel.
signup-unreadable = Het formulier kon niet worden gelezen. Probeer het opnieuw.
signup-unsupported = Het formulier is verstuurd in een formaat dat deze dienst niet begrijpt.
signup-too-large = Het formulier was te groot. Vul alleen je e-mailadres in.
signup-origin-not-allowed = Dit formulier kan niet worden gebruikt vanaf de site waarvandaan het is verstuurd.
signup-invalid-email = Vul een geldig e-mailadres in, zoals naam@example.com.
signup-consent-required = Vink het vakje aan om akkoord te gaan met het ontvangen van deze e-mails.
signup-unknown-list = Dit formulier verwijst naar een lijst die niet bestaat.
signup-invalid-source = Dit formulier stuurt een bron mee die deze dienst niet accepteert. Laat het de beheerder van de site weten.
signup-unknown-tag = Dit formulier stuurt een tag mee die de lijst niet kent. Laat het de beheerder van de site weten.
signup-domain-not-allowed = Met adressen van dit domein kun je je hier niet aanmelden. Gebruik een ander e-mailadres.
signup-rate-limited = Te veel aanmeldingen vanaf je netwerk. Probeer het later opnieuw.
signup-storage-unavailable = Je aanmelding kon op dit moment niet worden opgeslagen. Probeer het over een minuut opnieuw.

## check inbox

check-inbox-title = Kijk in je inbox
check-inbox-sent = Als het adres e-mail kan ontvangen, is er een bericht onderweg. Open de link erin en klik op de knop om te bevestigen.
check-inbox-sent-for = Als het adres e-mail kan ontvangen, is er een bericht over { $list } onderweg. Open de link erin en klik op de knop om te bevestigen.
check-inbox-nothing-arrived = Na een paar minuten nog niets ontvangen? Kijk in je spammap. De link werkt maar een beperkte tijd; je kunt je gewoon opnieuw aanmelden.
check-inbox-open-inbox = { $provider } openen

## surge

surge-title = Nog één stap
surge-unusual = Deze site krijgt op dit moment ongewoon veel verkeer. Daarom gaan bevestigingsmails alleen naar mensen die erom vragen.
surge-ask = Klik op de knop, dan is je bevestigingsmail onderweg.
surge-button = Stuur mijn bevestigingsmail
surge-not-you = Heb je je niet aangemeld? Sluit deze pagina, dan wordt er niets verstuurd.

## confirm

confirm-title = Bevestig je aanmelding: { $list }
confirm-heading = Bevestig je aanmelding
confirm-intro = Je hebt gevraagd om { $list } per e-mail te ontvangen. Klik op de knop om te bevestigen; tot dan wordt er niets verstuurd.
confirm-email-label = Je e-mailadres
confirm-email-hint = Typ het adres waarnaar deze e-mail is gestuurd. Zo kunnen programma's die links automatisch controleren niet namens jou bevestigen.
confirm-button = Aanmelding bevestigen
confirm-not-you = Niet aangevraagd? Sluit deze pagina gewoon; zonder bevestiging krijg je niets meer.
confirm-wrong-address = Naar dat adres is deze link niet gestuurd. Typ het opnieuw.
confirm-already-title = Al bevestigd
confirm-already = Dit adres is al aangemeld voor { $list }. Je hoeft niets meer te doen.
confirm-done-title = Je bent aangemeld
confirm-done = Bedankt. Je adres is nu aangemeld voor { $list }.
confirm-done-any = Bedankt. Je adres is nu aangemeld.
confirm-expired-title = Deze link is verlopen
confirm-expired = De bevestigingslink is niet meer geldig: hij is verlopen, vervangen door een nieuwere e-mail of al gebruikt. Je kunt je opnieuw aanmelden.
confirm-sign-up-again = Opnieuw aanmelden

## manage

manage-title = Mijn adres verwijderen
manage-intro = Hiermee wordt je adres verwijderd uit { $list }. Je krijgt daarvan geen e-mail meer.
manage-intro-any = Hiermee wordt je adres verwijderd uit de lijst waarvoor deze link is verstuurd. Je krijgt daarvan geen e-mail meer.
manage-button = Mijn adres verwijderen
manage-removed-title = Adres verwijderd
manage-removed = Je adres is verwijderd uit { $list }. Je krijgt daarvan geen e-mail meer.
manage-removed-any = Je adres is verwijderd. Je krijgt van deze lijst geen e-mail meer.

## preferences

preferences-title = Je e-mailvoorkeuren
preferences-intro = Vink de lijsten van { $site } aan die je wilt ontvangen, vink de lijsten uit die je niet meer wilt, en sla op.
preferences-legend = Lijsten
preferences-pending = In afwachting van je bevestiging.
preferences-kept = Wat je ons bij je aanmelding hebt verteld:
preferences-save = Opslaan
preferences-remove-all-heading = Mijn adres verwijderen
preferences-remove-all-intro = Of verwijder je adres in één keer uit al deze lijsten. Je krijgt daarvan dan geen e-mail meer.
preferences-remove-all = Verwijder me uit alle lijsten
preferences-saved-title = Voorkeuren opgeslagen
preferences-saved = Je keuzes voor { $site } zijn opgeslagen. Je krijgt alleen nog e-mail van de lijsten die je hebt aangevinkt.
preferences-saved-any = Je keuzes zijn opgeslagen. Je krijgt alleen nog e-mail van de lijsten die je hebt aangevinkt.
preferences-unreadable-title = Het formulier kon niet worden gelezen
preferences-unreadable = Er is niets gewijzigd. Open de link uit de e-mail opnieuw en sla nog een keer op.

## privacy

privacy-title = Privacy: { $list }
privacy-heading = Wat er met je adres gebeurt
privacy-intro = Op deze pagina lees je wat er wordt bewaard als je je aanmeldt voor { $list }, en hoe lang.
privacy-stored-heading = Wat er wordt bewaard
privacy-stored = Je e-mailadres, de lijst, de versie van de toestemmingstekst waarmee je akkoord ging ({ $version }) en die tekst zelf, wanneer je je hebt aangemeld, en wanneer en hoe je hebt bevestigd (ook hoe lang na de e-mail). Als het formulier ze noemt, ook de plek waar je je hebt aangemeld (zoals “homepage-footer”) en de onderwerpen die het vermeldt.
privacy-fields = Het formulier vraagt ook naar { $fields }. Wat je daar invult, wordt met je aanmelding bewaard, net zo lang als de rest, en getoond op je voorkeurenpagina.
privacy-no-ip = Je IP-adres wordt niet bewaard. Om misbruik te beperken telt signupd aanmeldingen per netwerk onder een onomkeerbare hash van het netwerk, nooit onder het adres zelf: { $limits }. Een teller beslaat hoogstens { $duration } en wordt bij de eerstvolgende opschoning daarna verwijderd.
privacy-mail-heading = De e-mails
privacy-mail = Je krijgt één e-mail met een bevestigingslink, en als je je opnieuw aanmeldt hoogstens één nieuwe per { $duration }. Tot je bevestigt, wordt er niets anders verstuurd.
privacy-unconfirmed = Als je niet bevestigt, werkt de link { $duration } na de laatste e-mail niet meer, en wordt je adres bij de eerstvolgende opschoning daarna verwijderd.
privacy-neighbourhood = Alle netwerken van één buurt (een adresblok van één provider) worden bovendien samen geteld: { $limits }.
privacy-never-mailed = Kon de bevestigingsmail nog niet worden verstuurd (als veel mensen zich tegelijk aanmelden), dan wordt je adres { $duration } na je aanmelding verwijderd, of de e-mail nu verstuurd is of niet.
privacy-cap =
    Zodat niemand je inbox kan overspoelen door je adres in veel formulieren in te vullen, gaan er naar één adres binnen 24 uur hoogstens { $n ->
        [one] { $n } bevestigingsmail
       *[other] { $n } bevestigingsmails
    }, over alle lijsten van deze dienst samen. Daarvoor wordt een onomkeerbare hash van je adres met het tijdstip van elke zo'n e-mail één dag bewaard.
privacy-reputation = Als je bevestigt, wordt een onomkeerbare hash van je netwerk (een adresblok van één provider) met de dag { $duration } lang bewaard: als veel mensen zich tegelijk aanmelden, gaat e-mail naar netwerken waar mensen bevestigen eerst. Verder wordt er niets over de bevestiging bij bewaard.
privacy-removal-heading = Je adres verwijderen
privacy-removal = Elke e-mail bevat een link om je adres te verwijderen. Gebruik je die, dan wordt je adres gewist. Alleen een onomkeerbare hash ervan blijft bewaard, zodat het nooit meer e-mail krijgt zonder nieuwe bevestiging — of helemaal nooit meer, als je hebt aangegeven dat de aanmelding niet van jou was.
privacy-shared = Als je bevestigt of je adres verwijdert, krijgen de eigen systemen van de beheerder daarvan bericht, met je adres en waarmee je akkoord ging.
privacy-contact = Vragen? Schrijf naar { $address }.

## mail

mail-greeting = Hallo,
mail-asked = Iemand (hopelijk jij) heeft gevraagd om { $list } op dit adres te ontvangen.
mail-how = Open deze link en klik op de knop “{ $button }” om te bevestigen:
mail-confirm-link = Mijn aanmelding bevestigen
mail-copy = Of kopieer dit adres naar je browser:
mail-until = De link werkt tot { $date }. Tot je bevestigt, wordt er niets anders verstuurd.
mail-not-you = Niet aangevraagd? Dan kun je deze e-mail negeren, of dit adres definitief verwijderen:
mail-remove-for-good = Dit adres verwijderen
mail-welcome = Je adres is nu aangemeld voor { $list }. Bedankt voor je bevestiging.
mail-preferences-any-time = Op je voorkeurenpagina kies je op elk moment wat je van ons krijgt, of meld je je af:
mail-preferences-link = Mijn voorkeurenpagina openen
mail-automated = Dit is een automatisch verstuurd bericht.
mail-privacy = Wat we bewaren en hoe lang:
mail-confirm-subject = Bevestig je aanmelding
mail-welcome-subject = Je bent aangemeld

## language

language-name = Nederlands
