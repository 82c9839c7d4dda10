# signupd česky: každé slovo, které návštěvník čte na stránkách a v obou e-mailech.
# Identifikátory zpráv a proměnné ($list, $site, ...) jsou stejné jako v en.ftl.
#
# Oslovení: vykání („vy“, malé v); krátké věty.
# Slovníček:
#   sign up / signup        - přihlásit se k odběru / přihlášení
#   confirm                 - potvrdit / potvrzení
#   list                    - odběr (to, k čemu se člověk přihlašuje; $list je jeho název)
#   remove (my address)     - odstranit (adresu); data se „mažou“
#   preferences             - nastavení / stránka nastavení
#   email address           - e-mailová adresa (krátce: adresa)
#   link                    - odkaz
#   subscription            - přihlášení k odběru
#   unsubscribe             - odhlásit se (z odběru)
#   mail                    - e-mail
#   one-way hash            - jednosměrný otisk (hash)

## Mail dates

# Měsíce ve 2. pádě, jak stojí po čísle dne: „7. prosince 2026“.
date-format = { $day }. { $month } { $year }, { $time } UTC
date-month-1 = ledna
date-month-2 = února
date-month-3 = března
date-month-4 = dubna
date-month-5 = května
date-month-6 = června
date-month-7 = července
date-month-8 = srpna
date-month-9 = září
date-month-10 = října
date-month-11 = listopadu
date-month-12 = prosince

## Durations

# 4. pád, protože doba stojí po „za“, „na“, „nejvýše“: „za 1 hodinu“, „na 30 dní“.
duration-second =
    { $n ->
        [one] { $n } sekundu
        [few] { $n } sekundy
        [many] { $n } sekundy
       *[other] { $n } sekund
    }
duration-minute =
    { $n ->
        [one] { $n } minutu
        [few] { $n } minuty
        [many] { $n } minuty
       *[other] { $n } minut
    }
duration-hour =
    { $n ->
        [one] { $n } hodinu
        [few] { $n } hodiny
        [many] { $n } hodiny
       *[other] { $n } hodin
    }
duration-day =
    { $n ->
        [one] { $n } den
        [few] { $n } dny
        [many] { $n } dne
       *[other] { $n } dní
    }
duration-and = { $init } a { $last }
duration-separator = {", "}
duration-per = { $n } za { $duration }

## page

page-back-to = Zpět na { $site }
page-privacy = Co ukládáme a jak dlouho
page-languages = V dalších jazycích:

## errors

errors-unavailable-title = Zkuste to prosím znovu
errors-unavailable = Teď se to nepodařilo. Zkuste to prosím znovu za minutu.
errors-not-found-title = Nenalezeno
errors-not-found = Na této adrese není žádný přihlašovací formulář.
errors-not-found-link = Přejít na přihlašovací formulář
errors-incomplete-title = Tento odkaz je neúplný
errors-incomplete = Odkaz je zřejmě useknutý nebo pozměněný. Otevřete ho znovu z e-mailu, nebo zkopírujte celou adresu do prohlížeče.
errors-refused-title = To se nepodařilo
errors-refused = Požadavek se nepodařilo přečíst. Vraťte se prosím na stránku a zkuste to znovu.
errors-timeout = Požadavek nedorazil včas. Zkuste to prosím znovu.
errors-internal = Na naší straně se něco pokazilo. Zkuste to prosím znovu za minutu.

## signup

signup-title = Přihlášení k odběru: { $list }
signup-heading = Přihlášení k odběru { $list }
signup-intro = Zadejte svou e-mailovou adresu. Pošleme vám odkaz; přihlášeni budete, až ho otevřete a přihlášení potvrdíte.
signup-email-label = E-mailová adresa
signup-honeypot-label = Toto pole nechte prázdné
signup-submit = Přihlásit se
signup-choose-title = Přihlášení k odběru
signup-choose = Vyberte odběr:
signup-several-title = Přihlášení k odběru
signup-several-heading = Přihlášení k odběru
signup-lists-legend = Co chcete odebírat?
signup-several-consent = Chci e-mailem dostávat zaškrtnuté odběry. Z každého se mohu kdykoli odhlásit.
signup-no-list-ticked = Zaškrtněte prosím alespoň jeden odběr.
signup-optional = nepovinné
signup-choose-option = Vyberte
signup-field-missing = Vyplňte prosím pole „{ $field }“.
signup-field-invalid = Zkontrolujte prosím pole „{ $field }“: vyberte jednu z možností, nebo napište kratší text na jeden řádek.
signup-unreadable = Formulář se nepodařilo přečíst. Zkuste to prosím znovu.
signup-unsupported = Formulář byl odeslán ve formátu, kterému tato služba nerozumí.
signup-too-large = Formulář byl příliš velký. Zadejte prosím jen svou e-mailovou adresu.
signup-origin-not-allowed = Tento formulář nelze použít na webu, ze kterého byl odeslán.
signup-invalid-email = Zadejte prosím platnou e-mailovou adresu, například jmeno@example.com.
signup-consent-required = Zaškrtnutím políčka prosím potvrďte souhlas se zasíláním těchto e-mailů.
signup-unknown-list = Tento formulář odkazuje na odběr, který neexistuje.
signup-invalid-source = Tento formulář posílá zdroj, který tato služba nepřijímá. Dejte to prosím vědět provozovateli webu.
signup-unknown-tag = Tento formulář posílá štítek, který odběr nezná. Dejte to prosím vědět provozovateli webu.
signup-domain-not-allowed = Adresy z této domény tu nelze k přihlášení použít. Použijte prosím jinou e-mailovou adresu.
signup-rate-limited = Z vaší sítě přišlo příliš mnoho přihlášení. Zkuste to prosím později.
signup-storage-unavailable = Vaše přihlášení se teď nepodařilo uložit. Zkuste to prosím znovu za minutu.

## check inbox

check-inbox-title = Podívejte se do schránky
check-inbox-sent = Pokud adresa může přijímat poštu, je k vám zpráva na cestě. Otevřete v ní odkaz a potvrďte tlačítkem.
check-inbox-sent-for = Pokud adresa může přijímat poštu, je k vám na cestě zpráva o odběru { $list }. Otevřete v ní odkaz a potvrďte tlačítkem.
check-inbox-nothing-arrived = Ani po několika minutách nic nepřišlo? Podívejte se do složky se spamem. Odkaz platí jen omezenou dobu; můžete se jednoduše přihlásit znovu.
check-inbox-open-inbox = Otevřít { $provider }

## surge

surge-title = Ještě jeden krok
surge-unusual = Tento web má právě neobvykle vysoký provoz, a proto posílá potvrzovací e-maily jen těm, kdo o ně požádají.
surge-ask = Stiskněte tlačítko a potvrzovací e-mail se vydá na cestu.
surge-button = Poslat potvrzovací e-mail
surge-not-you = Nepřihlašovali jste se? Zavřete tuto stránku a nic se neodešle.

## confirm

confirm-title = Potvrzení přihlášení: { $list }
confirm-heading = Potvrďte přihlášení
confirm-intro = Požádali jste o zasílání odběru { $list } e-mailem. Potvrďte to tlačítkem; do té doby vám nic nepřijde.
confirm-email-label = Vaše e-mailová adresa
confirm-email-hint = Napište adresu, na kterou přišel tento e-mail. Automatické kontroly odkazů tak nemohou přihlášení potvrdit za vás.
confirm-button = Potvrdit přihlášení
confirm-not-you = Nežádali jste o to? Stačí zavřít tuto stránku; bez potvrzení vám už nic nepřijde.
confirm-wrong-address = Na tuto adresu odkaz odeslán nebyl. Napište ji prosím znovu.
confirm-already-title = Už potvrzeno
confirm-already = Tato adresa je k odběru { $list } už přihlášená. Není třeba nic dalšího dělat.
confirm-done-title = Přihlášení potvrzeno
confirm-done = Děkujeme. Vaše adresa je teď přihlášená k odběru { $list }.
confirm-done-any = Děkujeme. Vaše adresa je teď přihlášená k odběru.
confirm-expired-title = Platnost odkazu vypršela
confirm-expired = Potvrzovací odkaz už neplatí: vypršel, nahradil ho novější e-mail, nebo už byl použit. Můžete se přihlásit znovu.
confirm-sign-up-again = Přihlásit se znovu

## manage

manage-title = Odstranit mou adresu
manage-intro = Vaše adresa bude odstraněna z odběru { $list }. Už z něj nedostanete žádný e-mail.
manage-intro-any = Vaše adresa bude odstraněna z odběru, pro který byl tento odkaz odeslán. Už z něj nedostanete žádný e-mail.
manage-button = Odstranit mou adresu
manage-removed-title = Adresa odstraněna
manage-removed = Vaše adresa byla odstraněna z odběru { $list }. Už z něj nedostanete žádný e-mail.
manage-removed-any = Vaše adresa byla odstraněna. Z tohoto odběru už nedostanete žádný e-mail.

## preferences

preferences-title = Nastavení e-mailů
preferences-intro = Zaškrtněte odběry od { $site }, které chcete dostávat, odškrtněte ty, o které už nestojíte, a uložte.
preferences-legend = Odběry
preferences-pending = Čeká na vaše potvrzení.
preferences-kept = Co jste nám sdělili při přihlášení:
preferences-save = Uložit
preferences-remove-all-heading = Odstranit mou adresu
preferences-remove-all-intro = Nebo odstraňte svou adresu ze všech těchto odběrů najednou. Už z nich nedostanete žádný e-mail.
preferences-remove-all = Odstranit mě ze všech
preferences-saved-title = Nastavení uloženo
preferences-saved = Vaše volba pro { $site } byla uložena. E-maily budete dostávat jen ze zaškrtnutých odběrů.
preferences-saved-any = Vaše volba byla uložena. E-maily budete dostávat jen ze zaškrtnutých odběrů.
preferences-unreadable-title = Formulář se nepodařilo přečíst
preferences-unreadable = Nic se nezměnilo. Otevřete prosím znovu odkaz z e-mailu a uložte ještě jednou.

## privacy

privacy-title = Ochrana soukromí: { $list }
privacy-heading = Co se děje s vaší adresou
privacy-intro = Tato stránka popisuje, co se ukládá, když se přihlásíte k odběru { $list }, a jak dlouho.
privacy-stored-heading = Co se ukládá
privacy-stored = Vaše e-mailová adresa, odběr, verze textu souhlasu, který jste přijali ({ $version }), i tento text samotný, kdy jste se přihlásili a kdy a jak jste přihlášení potvrdili (včetně toho, jak dlouho po odeslání e-mailu). Pokud je formulář uvádí, také místo, odkud jste se přihlásili (například „homepage-footer“), a témata, která uvádí.
privacy-fields = Formulář se ptá také na: { $fields }. Co tam vyplníte, se uloží s vaším přihlášením na stejně dlouho jako ostatní údaje a zobrazí se na vaší stránce nastavení.
privacy-no-ip = Vaše IP adresa se neukládá. Aby omezil zneužití, počítá signupd přihlášení z každé sítě pod jednosměrným otiskem (hashem) sítě, nikdy ne pod samotnou adresou: { $limits }. Počítadlo zahrnuje nejvýše { $duration } a při nejbližším úklidu poté se smaže.
privacy-mail-heading = E-maily
privacy-mail = Dostanete jeden e-mail s potvrzovacím odkazem, a pokud se přihlásíte znovu, nejvýše jeden nový za { $duration }. Dokud nepotvrdíte, nic dalšího se neposílá.
privacy-unconfirmed = Pokud nepotvrdíte, odkaz přestane fungovat { $duration } po posledním e-mailu a vaše adresa se smaže při nejbližším úklidu poté.
privacy-neighbourhood = Všechny sítě jednoho sousedství (bloku adres jednoho poskytovatele) se navíc počítají dohromady: { $limits }.
privacy-never-mailed = Pokud se potvrzovací e-mail zatím nepodařilo odeslat (když se najednou přihlašuje mnoho lidí), vaše adresa se smaže { $duration } po přihlášení, ať už e-mail odešel, nebo ne.
privacy-cap =
    Aby nikdo nemohl zahltit vaši schránku tím, že vaši adresu zadá do mnoha formulářů, přijdou na jednu adresu během 24 hodin nejvýše { $n ->
        [one] { $n } potvrzovací e-mail
        [few] { $n } potvrzovací e-maily
        [many] { $n } potvrzovacího e-mailu
       *[other] { $n } potvrzovacích e-mailů
    }, ze všech odběrů této služby dohromady. K tomu se jednosměrný otisk vaší adresy uchovává jeden den spolu s časem každého takového e-mailu.
privacy-reputation = Když přihlášení potvrdíte, uloží se jednosměrný otisk vaší sítě (bloku adres jednoho poskytovatele) s datem na { $duration }: když se najednou přihlašuje mnoho lidí, e-maily do sítí, ze kterých lidé potvrzují, odcházejí jako první. Nic dalšího o potvrzení se s ním neukládá.
privacy-removal-heading = Odstranění adresy
privacy-removal = Každý e-mail obsahuje odkaz na odstranění vaší adresy. Když ho použijete, vaše adresa se smaže. Zůstane jen její jednosměrný otisk, aby na ni už nikdy nepřišel e-mail bez nového potvrzení – nebo už vůbec nikdy, pokud jste uvedli, že přihlášení nebylo vaše.
privacy-shared = Když přihlášení potvrdíte nebo adresu odstraníte, dozvědí se to vlastní systémy provozovatele, spolu s vaší adresou a tím, s čím jste souhlasili.
privacy-contact = Máte otázky? Napište na { $address }.

## mail

mail-greeting = Dobrý den,
mail-asked = někdo – doufáme, že vy – požádal o zasílání odběru { $list } na tuto adresu.
mail-how = Přihlášení potvrdíte tak, že otevřete tento odkaz a stisknete tlačítko „{ $button }“:
mail-confirm-link = Potvrdit přihlášení
mail-copy = Nebo zkopírujte tuto adresu do prohlížeče:
mail-until = Odkaz platí do { $date }. Dokud nepotvrdíte, nic dalšího vám nepošleme.
mail-not-you = Nežádali jste o to? Tento e-mail můžete ignorovat, nebo tuto adresu natrvalo odstranit:
mail-remove-for-good = Odstranit tuto adresu
mail-welcome = vaše adresa je teď přihlášená k odběru { $list }. Děkujeme za potvrzení.
mail-preferences-any-time = Na stránce nastavení si můžete kdykoli vybrat, co od nás budete dostávat, nebo se odhlásit:
mail-preferences-link = Otevřít stránku nastavení
mail-automated = Tato zpráva byla odeslána automaticky.
mail-privacy = Co ukládáme a jak dlouho:
mail-confirm-subject = Potvrďte prosím přihlášení k odběru
mail-welcome-subject = Přihlášení k odběru potvrzeno

## language

language-name = Čeština
