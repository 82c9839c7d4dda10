# signupd på svenska: varje ord som en besökare läser på sidorna och i de två mejlen.
# Meddelandenas id:n och variablerna ($list, $site, ...) är desamma som i en.ftl.
#
# Tilltal: "du", som svenska webbplatser; korta meningar.
# Ordlista:
#   sign up / signup        - anmäla sig / anmälan
#   confirm                 - bekräfta / bekräftelse
#   list                    - lista
#   remove (my address)     - ta bort (min adress); uppgifterna "raderas"
#   preferences             - inställningar / inställningssida
#   email address           - e-postadress (kort: adress)
#   link                    - länk
#   subscription            - anmälan
#   unsubscribe             - avregistrera sig
#   mail                    - mejl
#   one-way hash            - envägshash

## Mail dates

date-format = { $day } { $month } { $year } kl. { $time } UTC
date-month-1 = januari
date-month-2 = februari
date-month-3 = mars
date-month-4 = april
date-month-5 = maj
date-month-6 = juni
date-month-7 = juli
date-month-8 = augusti
date-month-9 = september
date-month-10 = oktober
date-month-11 = november
date-month-12 = december

## Durations

duration-second =
    { $n ->
        [one] { $n } sekund
       *[other] { $n } sekunder
    }
duration-minute =
    { $n ->
        [one] { $n } minut
       *[other] { $n } minuter
    }
duration-hour =
    { $n ->
        [one] { $n } timme
       *[other] { $n } timmar
    }
duration-day =
    { $n ->
        [one] { $n } dag
       *[other] { $n } dagar
    }
duration-and = { $init } och { $last }
duration-separator = {", "}
duration-per = { $n } per { $duration }

## page

page-back-to = Tillbaka till { $site }
page-privacy = Vad vi sparar och hur länge
page-languages = På andra språk:

## errors

errors-unavailable-title = Försök igen
errors-unavailable = Det gick inte just nu. Försök igen om en minut.
errors-not-found-title = Hittades inte
errors-not-found = Här finns inget anmälningsformulär.
errors-not-found-link = Till anmälningsformuläret
errors-incomplete-title = Länken är ofullständig
errors-incomplete = Länken verkar vara avklippt eller ändrad. Öppna den igen från mejlet, eller kopiera hela adressen till din webbläsare.
errors-refused-title = Det gick inte
errors-refused = Förfrågan kunde inte läsas. Gå tillbaka till sidan och försök igen.
errors-timeout = Förfrågan kom inte fram i tid. Försök igen.
errors-internal = Något gick fel hos oss. Försök igen om en minut.

## signup

signup-title = Anmälan: { $list }
signup-heading = Anmäl dig till { $list }
signup-intro = Skriv din e-postadress. Vi skickar en länk till dig; du är anmäld först när du har öppnat den och bekräftat.
signup-email-label = E-postadress
signup-honeypot-label = Lämna det här fältet tomt
signup-submit = Anmäl mig
signup-choose-title = Anmälan
signup-choose = Välj en lista:
signup-several-title = Anmälan
signup-several-heading = Anmälan
signup-lists-legend = Vilka listor vill du få?
signup-several-consent = Skicka de listor jag har kryssat i till mig via mejl. Jag kan när som helst avregistrera mig från var och en.
signup-no-list-ticked = Kryssa i minst en lista.
signup-optional = frivilligt
signup-choose-option = Välj
signup-field-missing = Fyll i ”{ $field }”.
signup-field-invalid = Kontrollera ”{ $field }”: välj ett av alternativen, eller skriv kortare och på en rad.
signup-unreadable = Formuläret kunde inte läsas. Försök igen.
signup-unsupported = Formuläret skickades i ett format som den här tjänsten inte förstår.
signup-too-large = Formuläret var för stort. Skriv bara din e-postadress.
signup-origin-not-allowed = Formuläret kan inte användas från den webbplats som det skickades från.
signup-invalid-email = Skriv en giltig e-postadress, till exempel namn@example.com.
signup-consent-required = Kryssa i rutan för att godkänna att du får de här mejlen.
signup-unknown-list = Formuläret pekar på en lista som inte finns.
signup-invalid-source = Formuläret skickar en källa som den här tjänsten inte tar emot. Meddela gärna webbplatsens ägare.
signup-unknown-tag = Formuläret skickar en tagg som listan inte känner till. Meddela gärna webbplatsens ägare.
signup-domain-not-allowed = Adresser på den här domänen kan inte användas för att anmäla sig här. Använd en annan e-postadress.
signup-rate-limited = För många anmälningar från ditt nätverk. Försök igen senare.
signup-storage-unavailable = Din anmälan kunde inte sparas just nu. Försök igen om en minut.

## check inbox

check-inbox-title = Titta i din inkorg
check-inbox-sent = Om adressen kan ta emot mejl är ett meddelande på väg. Öppna länken i det och tryck på knappen för att bekräfta.
check-inbox-sent-for = Om adressen kan ta emot mejl är ett meddelande om { $list } på väg. Öppna länken i det och tryck på knappen för att bekräfta.
check-inbox-nothing-arrived = Har inget kommit efter några minuter? Titta i skräppostmappen. Länken fungerar bara en begränsad tid; du kan helt enkelt anmäla dig igen.
check-inbox-open-inbox = Öppna { $provider }

## surge

surge-title = Ett steg till
surge-unusual = Webbplatsen har ovanligt mycket trafik just nu, så den skickar bara bekräftelsemejl till dem som ber om ett.
surge-ask = Tryck på knappen, så är ditt bekräftelsemejl på väg.
surge-button = Skicka mitt bekräftelsemejl
surge-not-you = Har du inte anmält dig? Stäng sidan, så skickas ingenting.

## confirm

confirm-title = Bekräfta din anmälan: { $list }
confirm-heading = Bekräfta din anmälan
confirm-intro = Du har bett om att få { $list } via mejl. Tryck på knappen för att bekräfta; inget skickas förrän du har gjort det.
confirm-email-label = Din e-postadress
confirm-email-hint = Skriv adressen som det här mejlet skickades till. Då kan program som automatiskt kontrollerar länkar inte bekräfta åt dig.
confirm-button = Bekräfta anmälan
confirm-not-you = Har du inte bett om det här? Stäng bara sidan; utan bekräftelse får du inget mer.
confirm-wrong-address = Det är inte den adress som länken skickades till. Skriv den igen.
confirm-already-title = Redan bekräftad
confirm-already = Den här adressen är redan anmäld till { $list }. Du behöver inte göra något mer.
confirm-done-title = Du är anmäld
confirm-done = Tack! Din adress är nu anmäld till { $list }.
confirm-done-any = Tack! Din adress är nu anmäld.
confirm-expired-title = Länken har gått ut
confirm-expired = Bekräftelselänken gäller inte längre: den har gått ut, ersatts av ett nyare mejl eller redan använts. Du kan anmäla dig igen.
confirm-sign-up-again = Anmäl dig igen

## manage

manage-title = Ta bort min adress
manage-intro = Det här tar bort din adress från { $list }. Du får inga fler mejl därifrån.
manage-intro-any = Det här tar bort din adress från listan som länken skickades för. Du får inga fler mejl därifrån.
manage-button = Ta bort min adress
manage-removed-title = Adressen är borttagen
manage-removed = Din adress har tagits bort från { $list }. Du får inga fler mejl därifrån.
manage-removed-any = Din adress har tagits bort. Du får inga fler mejl från den här listan.

## preferences

preferences-title = Dina e-postinställningar
preferences-intro = Kryssa i de listor från { $site } som du vill få, kryssa ur dem du inte längre vill ha och spara.
preferences-legend = Listor
preferences-pending = Väntar på din bekräftelse.
preferences-kept = Det här uppgav du när du anmälde dig:
preferences-save = Spara
preferences-remove-all-heading = Ta bort min adress
preferences-remove-all-intro = Eller ta bort din adress från alla de här listorna på en gång. Då får du inga fler mejl från dem.
preferences-remove-all = Ta bort mig från alla
preferences-saved-title = Inställningarna är sparade
preferences-saved = Dina val för { $site } har sparats. Du får bara mejl från de listor du har kryssat i.
preferences-saved-any = Dina val har sparats. Du får bara mejl från de listor du har kryssat i.
preferences-unreadable-title = Formuläret kunde inte läsas
preferences-unreadable = Inget har ändrats. Öppna länken i mejlet igen och spara en gång till.

## privacy

privacy-title = Integritet: { $list }
privacy-heading = Vad som händer med din adress
privacy-intro = Här beskriver vi vad som sparas när du anmäler dig till { $list }, och hur länge.
privacy-stored-heading = Vad som sparas
privacy-stored = Din e-postadress, listan, versionen av den samtyckestext du godkände ({ $version }) och själva texten, när du anmälde dig och när och hur du bekräftade (även hur lång tid efter mejlet). Om formuläret anger dem, även varifrån du anmälde dig (till exempel ”homepage-footer”) och de ämnen det listar.
privacy-fields = Formuläret frågar också efter { $fields }. Det du skriver där sparas med din anmälan, lika länge som resten, och visas på din inställningssida.
privacy-no-ip = Din IP-adress sparas inte. För att begränsa missbruk räknar signupd anmälningar per nätverk under en envägshash av nätverket, aldrig under själva adressen: { $limits }. En räknare omfattar högst { $duration } och raderas vid nästa rensning därefter.
privacy-mail-heading = Mejlen
privacy-mail = Du får ett mejl med en bekräftelselänk, och om du anmäler dig igen högst ett nytt per { $duration }. Inget annat skickas förrän du har bekräftat.
privacy-unconfirmed = Om du inte bekräftar slutar länken att fungera { $duration } efter det senaste mejlet, och din adress raderas vid nästa rensning därefter.
privacy-neighbourhood = Alla nätverk i samma grannskap (ett adressblock hos en och samma leverantör) räknas dessutom tillsammans: { $limits }.
privacy-never-mailed = Om bekräftelsemejlet inte har kunnat skickas än (när många anmäler sig samtidigt) raderas din adress { $duration } efter att du anmälde dig, oavsett om mejlet har skickats eller inte.
privacy-cap =
    För att ingen ska kunna fylla din inkorg genom att skriva in din adress i många formulär går högst { $n ->
        [one] { $n } bekräftelsemejl
       *[other] { $n } bekräftelsemejl
    } till samma adress under ett dygn, räknat över alla listor i den här tjänsten. Därför sparas en envägshash av din adress tillsammans med tidpunkten för varje sådant mejl, i ett dygn.
privacy-reputation = När du bekräftar sparas en envägshash av ditt nätverk (ett adressblock hos en och samma leverantör) tillsammans med datumet, i { $duration }: när många anmäler sig samtidigt går mejl till nätverk där folk bekräftar först. Inget annat om bekräftelsen sparas med den.
privacy-removal-heading = Ta bort din adress
privacy-removal = Varje mejl har en länk för att ta bort din adress. När du använder den raderas din adress. Bara en envägshash av den sparas, så att den aldrig får mejl igen utan en ny bekräftelse – eller aldrig någonsin, om du har angett att anmälan inte var din.
privacy-shared = När du bekräftar eller tar bort din adress får operatörens egna system veta det, med din adress och vad du har godkänt.
privacy-contact = Frågor? Skriv till { $address }.

## mail

mail-greeting = Hej!
mail-asked = Någon – förhoppningsvis du – har bett om att få { $list } till den här adressen.
mail-how = Bekräfta genom att öppna den här länken och trycka på knappen ”{ $button }”:
mail-confirm-link = Bekräfta min anmälan
mail-copy = Eller kopiera den här adressen till din webbläsare:
mail-until = Länken fungerar till { $date }. Tills du bekräftar skickas inget annat.
mail-not-you = Har du inte bett om det här? Då kan du strunta i mejlet, eller ta bort adressen för gott:
mail-remove-for-good = Ta bort den här adressen
mail-welcome = Din adress är nu anmäld till { $list }. Tack för att du bekräftade.
mail-preferences-any-time = På din inställningssida kan du när som helst välja vad du får från oss, eller avregistrera dig:
mail-preferences-link = Öppna min inställningssida
mail-automated = Det här är ett automatiskt meddelande.
mail-privacy = Vad vi sparar och hur länge:
mail-confirm-subject = Bekräfta din anmälan
mail-welcome-subject = Du är anmäld

## language

language-name = Svenska
